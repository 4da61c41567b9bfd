/* The transports read with read() (see transport.h): stdin ("-"), tcp:HOST:PORT, and a path, which
 * is a serial port (libserialport), a pty or another terminal (termios), or a file read to its end. */
#ifndef CMPROF_SOURCE_STREAMS_H
#define CMPROF_SOURCE_STREAMS_H

#include "transport.h"

#include <stdio.h>

extern const struct transport tr_stdin, tr_tcp;
/* Any spec: its constructor hands over to one of the three below, by what the path is. */
extern const struct transport tr_path;
extern const struct transport tr_file, tr_serial, tr_tty;

/* src_list_ports(): one line per serial port with its description; the number found. */
int streams_list_ports(FILE *out);

#endif
