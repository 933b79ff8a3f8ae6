// Native Verilator harness for any block with a stream in and a stream out (the
// samplers, the tagged compressor, the multi-hash profiler).
//
// The top is a generated Verilog wrapper (hwprof.sim.native.stream_wrapper) around
// the block: flops in the wrapper drive the block's input stream (valid, payload)
// and its output stream's ready, and once per rising edge the wrapper calls
// hwprof_step (below, DPI) with what it saw in the cycle that ends (the block's
// ready, valid and payload, before the edge) to learn what to drive next. The block's
// inputs are thus all flops: its combinational logic is evaluated once per cycle
// (after the edge), not again for every change of a C++-driven input.
//
// Stimulus: the 64-bit keys of a file in order, one offered every cycle and held
// until accepted (valid/ready); the output's ready high, or low on a seeded fraction
// of cycles (READY_PPM: parts per million of cycles with ready high); DRAIN cycles
// after the last key is accepted. Any other input of the block is tied to 0.
//
// Writes every transfer on the output stream as 1 + W little-endian uint64 words: the
// cycle (0 = the first after reset; tuple t is offered first in cycle t), then the
// payload in W = ceil(bits / 64) words, least significant first. With STALLS.bin,
// writes there every run of input stalls (consecutive cycles a key was offered and not
// accepted) as 3 little-endian uint64 words: its first cycle, the index of the key
// waiting, its cycles. Prints one JSON line (harness.h report): cycles, times,
// accepted tuples, input stalls (cycles a key was offered and not accepted), output
// transfers and W.
//
// usage: stream KEYS.bin OUT.bin DRAIN [READY_PPM SEED [STALLS.bin]] [+NAME=VALUE..]
// (the +plusargs go to the model's $value$plusargs, e.g. hwprof mutate's +mutsel=i)
// -DHWPROF_PAYLOAD_BITS=<output payload width> -DHWPROF_KEY_BITS=<input payload width>
// -DHWPROF_DPI_HEADER="V<wrapper>__Dpi.h"
#include <memory>

#include "harness.h"
#include HWPROF_TOP_HEADER
#include "svdpi.h"
#include HWPROF_DPI_HEADER  // hwprof_step's prototype, as Verilator declares it

namespace {

constexpr int kOutWords32 = (HWPROF_PAYLOAD_BITS + 31) / 32;
constexpr int kOutWords64 = (HWPROF_PAYLOAD_BITS + 63) / 64;
static_assert(HWPROF_KEY_BITS <= 64, "keys are read as uint64");

struct State {
    const hwprof::Keys* keys = nullptr;
    hwprof::Writer* out = nullptr;
    hwprof::Writer* stall_out = nullptr;  // runs of stalls (STALLS.bin), or none
    uint64_t run_start = 0, run_cycles = 0;  // the run of stalls under way
    uint64_t drain = 0, ready_ppm = 1000000, x = 1;
    uint64_t next = 0;  // next key to offer
    uint64_t key = 0;   // the key offered (held while not accepted)
    uint64_t cycle = 0, accepted = 0, stalls = 0, idle = 0, transfers = 0;
    bool done = false;
};
State S;

}  // namespace

// Called by the wrapper at every rising edge, the reset edge included (rst = 1),
// with the values of the cycle that ends; returns the next cycle's in valid, key and
// out ready.
extern "C" void hwprof_step(svBit rst, svBit in_valid, svBit in_ready, svBit out_valid,
                            svBit out_ready, const svBitVecVal* payload, svBit* valid,
                            svBitVecVal* key, svBit* ready) {
    State& s = S;
    bool advance = true;
    if (!rst) {
        if (out_valid && out_ready) {
            s.out->put(s.cycle);
            for (int w = 0; w < kOutWords64; ++w) {
                const uint64_t lo = payload[2 * w];
                const uint64_t hi = 2 * w + 1 < kOutWords32 ? payload[2 * w + 1] : 0;
                s.out->put(lo | hi << 32);
            }
            ++s.transfers;
        }
        if (in_valid) {
            if (in_ready) {
                if (s.run_cycles && s.stall_out) {
                    s.stall_out->put(s.run_start);
                    s.stall_out->put(s.accepted);
                    s.stall_out->put(s.run_cycles);
                }
                s.run_cycles = 0;
                ++s.accepted;
            } else {
                if (!s.run_cycles) s.run_start = s.cycle;
                ++s.run_cycles;
                ++s.stalls;
                advance = false;
            }
        } else {
            ++s.idle;
        }
        ++s.cycle;
        s.done = s.accepted == s.keys->size() && s.idle >= s.drain;
    }
    if (advance) {
        const bool offer = s.next < s.keys->size();
        *valid = offer;
        s.key = offer ? (*s.keys)[s.next++] : 0;
    } else {
        *valid = 1;  // held
    }
    key[0] = static_cast<uint32_t>(s.key);
    if (HWPROF_KEY_BITS > 32) key[1] = static_cast<uint32_t>(s.key >> 32);
    *ready = s.ready_ppm == 1000000 || (hwprof::xorshift(s.x) >> 11) % 1000000 < s.ready_ppm;
}

int main(int argc_all, char** argv_all) {
    using namespace hwprof;
    std::vector<char*> args;  // the positional arguments (the +plusargs are the model's)
    for (int i = 0; i < argc_all; ++i)
        if (i == 0 || argv_all[i][0] != '+') args.push_back(argv_all[i]);
    const int argc = static_cast<int>(args.size());
    char** argv = args.data();
    usage_if(argc != 4 && argc != 6 && argc != 7, argv[0],
             "KEYS.bin OUT.bin DRAIN [READY_PPM SEED [STALLS.bin]] [+NAME=VALUE..]");
    const Keys keys(argv[1]);
    Writer out(argv[2]);
    S.keys = &keys;
    S.out = &out;
    S.drain = parse_u64(argv[3]);
    std::unique_ptr<Writer> stall_out;
    if (argc == 7) {
        stall_out = std::make_unique<Writer>(argv[6]);
        S.stall_out = stall_out.get();
    }
    if (argc >= 6) {
        S.ready_ppm = parse_u64(argv[4]);
        S.x = parse_u64(argv[5]) | 1;
        if (S.ready_ppm > 1000000) die("READY_PPM must be at most 1000000", argv[4]);
    }
    VerilatedContext ctx;
    ctx.commandArgs(argc_all, argv_all);
    HWPROF_TOP* top = new HWPROF_TOP{&ctx};
    reset(top);  // the reset edge loads the first key
    Timer timer;
    while (!S.done) {
        top->eval();  // clk low (nothing of the block's logic changes)
        rising_edge(top);
    }
    timer.stop();
    out.close();
    if (stall_out) stall_out->close();
    char extra[160];
    std::snprintf(extra, sizeof extra,
                  ", \"tuples\": %llu, \"stalls\": %llu, \"transfers\": %llu, \"words\": %d",
                  (unsigned long long)S.accepted, (unsigned long long)S.stalls,
                  (unsigned long long)S.transfers, kOutWords64);
    report(S.cycle, timer, extra);
    top->final();
    delete top;
    return 0;
}
