// Shared pieces of the native Verilator harnesses (hwprof/sim/native/*.cpp): the
// model's reset and clock, the key file (mapped, not copied), output files, and
// the timing line every harness prints.
//
// The harness is compiled with -DHWPROF_TOP=V<top> -DHWPROF_TOP_HEADER="V<top>.h"
// (hwprof.sim.native.build_native).
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "verilated.h"

namespace hwprof {

[[noreturn]] inline void die(const char* what, const char* detail) {
    std::fprintf(stderr, "%s: %s\n", what, detail);
    std::exit(2);
}

inline void usage_if(bool bad, const char* prog, const char* usage) {
    if (bad) {
        std::fprintf(stderr, "usage: %s %s\n", prog, usage);
        std::exit(2);
    }
}

inline uint64_t parse_u64(const char* text) {
    char* end = nullptr;
    const uint64_t v = std::strtoull(text, &end, 0);
    if (!*text || *end) die("not an unsigned integer", text);
    return v;
}

// The clock: a rising edge (posedge logic, registered outputs), then clk low again.
// The falling edge is evaluated together with the next cycle's inputs (set_inputs,
// then eval), so a cycle costs two evaluations of the model.
template <class Top> inline void rising_edge(Top* top) {
    top->clk = 1;
    top->eval();
    top->clk = 0;
}

// Synchronous reset: rst high over one rising edge with every input at its reset
// value (the caller sets them first), then rst low (evaluated with the first inputs).
template <class Top> inline void reset(Top* top) {
    top->clk = 0;
    top->rst = 1;
    top->eval();
    rising_edge(top);
    top->rst = 0;
}

// A file of little-endian uint64 keys, mapped read-only.
class Keys {
  public:
    explicit Keys(const char* path) {
        const int fd = ::open(path, O_RDONLY);
        if (fd < 0) die(path, std::strerror(errno));
        struct stat st;
        if (::fstat(fd, &st) != 0) die(path, std::strerror(errno));
        if (st.st_size % 8) die(path, "size is not a multiple of 8 bytes (uint64 keys)");
        size_ = st.st_size / 8;
        if (size_) {
            void* p = ::mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (p == MAP_FAILED) die(path, std::strerror(errno));
            ::madvise(p, st.st_size, MADV_SEQUENTIAL);
            data_ = static_cast<const uint64_t*>(p);
        }
        ::close(fd);
    }
    ~Keys() {
        if (data_) ::munmap(const_cast<uint64_t*>(data_), size_ * 8);
    }
    Keys(const Keys&) = delete;
    Keys& operator=(const Keys&) = delete;
    uint64_t size() const { return size_; }
    uint64_t operator[](uint64_t i) const { return data_[i]; }

  private:
    const uint64_t* data_ = nullptr;
    uint64_t size_ = 0;
};

// Output records written through a buffer (records are rare beside cycles).
class Writer {
  public:
    explicit Writer(const char* path) : path_(path), f_(std::fopen(path, "wb")) {
        if (!f_) die(path, std::strerror(errno));
        buf_.reserve(1 << 16);
    }
    ~Writer() { close(); }
    void put(uint64_t word) {
        buf_.push_back(word);
        if (buf_.size() == buf_.capacity()) flush();
    }
    void close() {
        if (!f_) return;
        flush();
        if (std::fclose(f_) != 0) die(path_, std::strerror(errno));
        f_ = nullptr;
    }

  private:
    void flush() {
        if (!buf_.empty() && std::fwrite(buf_.data(), 8, buf_.size(), f_) != buf_.size())
            die(path_, std::strerror(errno));
        buf_.clear();
    }
    const char* path_;
    std::FILE* f_;
    std::vector<uint64_t> buf_;
};

// Wall and CPU time (this process) of the simulation loop only (not file I/O or
// model construction). On a shared machine the CPU time is the model's own cost;
// the wall time also holds the time other processes had the core.
inline double cpu_now() {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}
class Timer {
  public:
    Timer() : start_(std::chrono::steady_clock::now()), cpu_start_(cpu_now()) {}
    void stop() {
        wall_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        cpu_ = cpu_now() - cpu_start_;
    }
    double seconds() const { return wall_; }
    double cpu_seconds() const { return cpu_; }

  private:
    std::chrono::steady_clock::time_point start_;
    double cpu_start_;
    double wall_ = 0, cpu_ = 0;
};

// The timing line every harness prints last (the Python side reads the JSON).
inline void report(uint64_t cycles, const Timer& timer, const char* extra = "") {
    const double wall = timer.seconds(), cpu = timer.cpu_seconds();
    std::printf("{\"cycles\": %llu, \"seconds\": %.6f, \"cpu_seconds\": %.6f, "
                "\"cycles_per_second\": %.0f, \"cpu_cycles_per_second\": %.0f%s}\n",
                static_cast<unsigned long long>(cycles), wall, cpu,
                wall > 0 ? cycles / wall : 0.0, cpu > 0 ? cycles / cpu : 0.0, extra);
}

// xorshift64: the harnesses' seeded stimulus (freq, ready patterns).
inline uint64_t xorshift(uint64_t& x) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

}  // namespace hwprof
