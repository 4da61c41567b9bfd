// A C++ firmware for the ELF zoo: overloads, templates, namespaces, member functions, clones and
// inlined calls, so that names are checked against arm-none-eabi-addr2line -f [-C].
#include <stdint.h>

volatile int32_t sink;

namespace motor {
__attribute__((noinline)) int32_t scale(int32_t x) { return x * 3 + 1; }
__attribute__((noinline)) int64_t scale(int64_t x) { return x * 5 + 2; }
__attribute__((noinline)) float scale(float x) { return x * 0.5f; }

template <typename T, int N> struct Filter {
    T taps[N];
    __attribute__((noinline)) T run(T in)
    {
        T acc = 0;
        for (int i = N - 1; i > 0; i--) {
            taps[i] = taps[i - 1];
            acc += taps[i];
        }
        taps[0] = in;
        return acc + in;
    }
};

static inline int32_t clamp(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }
inline int32_t step(int32_t v) { return clamp(scale(v), -1000, 1000) + 1; }
} // namespace motor

struct Controller {
    motor::Filter<int32_t, 4> a;
    motor::Filter<int16_t, 8> b;
    __attribute__((noinline)) int32_t tick(int32_t in) { return a.run(in) + b.run((int16_t)in) + motor::step(in); }
};

static Controller ctl;

extern "C" __attribute__((noreturn)) void Reset_Handler(void)
{
    for (int32_t i = 0;; i++)
        sink = ctl.tick(i) + (int32_t)motor::scale((int64_t)i) + (int32_t)motor::scale((float)i);
}

extern "C" __attribute__((section(".vectors"), used)) void (*const vectors[2])(void) = {
    (void (*)(void))0x20001000u, Reset_Handler};
