// Native Verilator harness for a stream compressor (tuples in, messages out):
// streams 64-bit keys from a file, one per cycle (tuples__valid = 1,
// messages__ready = 1), and writes every message as (cycle, key, count).
// HWPROF_TOP / HWPROF_TOP_HEADER name the Verilated class (-DHWPROF_TOP=Vx ...); Verilator
// spells the ports' double underscore ___05F.
//
// usage: stream KEYS.bin OUT.bin   (KEYS.bin: little-endian uint64 keys)
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include HWPROF_TOP_HEADER
#include "verilated.h"

template <typename T> static uint64_t word(const T& w, int i) { return w[i]; }

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s KEYS.bin OUT.bin\n", argv[0]);
        return 2;
    }
    std::FILE* in = std::fopen(argv[1], "rb");
    if (!in) { std::perror(argv[1]); return 1; }
    std::vector<uint64_t> keys;
    uint64_t buf[4096];
    size_t n;
    while ((n = std::fread(buf, 8, 4096, in)) > 0) keys.insert(keys.end(), buf, buf + n);
    std::fclose(in);
    VerilatedContext ctx;
    HWPROF_TOP* top = new HWPROF_TOP{&ctx};
    top->clk = 0;
    top->rst = 1;
    top->tuples___05Fvalid = 0;
    top->messages___05Fready = 1;
    top->eval();
    top->clk = 1; top->eval(); top->clk = 0; top->eval();
    top->rst = 0;
    std::vector<uint64_t> out;  // cycle, key, count
    const uint64_t cycles = keys.size() + 2;
    uint64_t stalls = 0;
    auto start = std::chrono::steady_clock::now();
    for (uint64_t i = 0; i < cycles; ++i) {
        top->tuples___05Fvalid = i < keys.size();
        top->tuples___05Fpayload = i < keys.size() ? keys[i] : 0;
        top->eval();
        if (i < keys.size() && !top->tuples___05Fready) ++stalls;
        if (top->messages___05Fvalid) {
            // payload = {count, key}: key in bits 0..63, count above
            const auto& p = top->messages___05Fpayload;
            out.push_back(i);
            out.push_back(word(p, 0) | (word(p, 1) << 32));
            out.push_back(word(p, 2));
        }
        top->clk = 1; top->eval(); top->clk = 0; top->eval();
    }
    auto stop = std::chrono::steady_clock::now();
    double seconds = std::chrono::duration<double>(stop - start).count();
    std::FILE* o = std::fopen(argv[2], "wb");
    if (!o) { std::perror(argv[2]); return 1; }
    std::fwrite(out.data(), 8, out.size(), o);
    std::fclose(o);
    std::printf("%llu cycles %llu stalls %.6f s %.0f cycles/s\n", (unsigned long long)cycles,
                (unsigned long long)stalls, seconds, cycles / seconds);
    top->final();
    delete top;
    return 0;
}
