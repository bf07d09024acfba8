// gemm_bf16.cu: dense bf16 matrix-product rate through cuBLAS (the layout planner's compute calibration).
//
// C[m x n] (bf16) = op(A) * B with A, B bf16, fp32 accumulation (cublasGemmEx, CUBLAS_COMPUTE_32F,
// CUBLAS_GEMM_DEFAULT), "TN" layout (A stored k x m and transposed, B stored k x n; column-major),
// which is the layout PyTorch's Linear uses. Square sizes m = n = k from --min-size to --max-size (x2).
// Inputs: uniform random in [-1, 1) from a hash (never zeros: zeros run faster than real data).
// Per size: `warmup` untimed products, then `iters` products, each timed by a CUDA event pair; median.
// TFLOPS = 2 m n k / time / 1e12. Correctness: 64 output elements are compared with a float64 CPU
// reference computed from the same bf16 inputs; the worst relative error (|c - ref| / rms(ref row)) is
// reported as max_rel_err and the record says check "ok" when it is below 2e-2.
//
// Usage: gemm_bf16 [--min-size 1024] [--max-size 16384] [--iters 20] [--warmup 5] [--device 0]
#define PROBE_NAME "gemm_bf16"
#include "probe_common.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>

namespace {

const char* kUsage = "gemm_bf16 [--min-size 1024] [--max-size 16384] [--iters 20] [--warmup 5] [--device 0]";

struct Opts {
  long long min_size = 1024, max_size = 16384, iters = 20, warmup = 5, device = 0;
};

Opts parse(int argc, char** argv) {
  Opts o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    auto need = [&](bool ok) {
      if (!ok) probe::bad_args(PROBE_NAME, "bad or missing value for " + a, kUsage);
      ++i;
    };
    if (a == "--help" || a == "-h") {
      std::printf("usage: %s\n", kUsage);
      std::exit(0);
    } else if (a == "--min-size") need(probe::parse_int(v, 16, 65536, &o.min_size));
    else if (a == "--max-size") need(probe::parse_int(v, 16, 65536, &o.max_size));
    else if (a == "--iters") need(probe::parse_int(v, 1, 100000, &o.iters));
    else if (a == "--warmup") need(probe::parse_int(v, 0, 100000, &o.warmup));
    else if (a == "--device") need(probe::parse_int(v, 0, 1 << 20, &o.device));
    else probe::bad_args(PROBE_NAME, "unknown argument '" + a + "'", kUsage);
  }
  if (o.min_size > o.max_size) probe::bad_args(PROBE_NAME, "--min-size is larger than --max-size", kUsage);
  return o;
}

__host__ __device__ inline float hash_uniform(unsigned long long i, unsigned seed) {
  unsigned long long x = i * 0x9E3779B97F4A7C15ull + seed * 0xD1B54A32D192ED03ull;
  x ^= x >> 31; x *= 0x7FB5D329728EA185ull; x ^= x >> 27; x *= 0x81DADEF4BC2DD44Dull; x ^= x >> 33;
  return static_cast<float>(x >> 40) * (2.0f / 16777216.0f) - 1.0f;  // [-1, 1)
}

__global__ void fill_kernel(__nv_bfloat16* p, size_t n, unsigned seed) {
  size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    p[i] = __float2bfloat16(hash_uniform(i, seed));
}

const char* cublas_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_OTHER";
  }
}

void check_cublas(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  probe::Rec("error").str("probe", PROBE_NAME).str("where", what).str("error", cublas_name(s))
      .i64("status", static_cast<int>(s)).print();
  std::fprintf(stderr, "%s: cuBLAS error in %s: %s (%d)\n", PROBE_NAME, what, cublas_name(s), static_cast<int>(s));
  std::exit(1);
}

float bf16_to_float(__nv_bfloat16 h) {
  unsigned short u;
  std::memcpy(&u, &h, 2);
  unsigned int w = static_cast<unsigned int>(u) << 16;
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  auto t0 = std::chrono::steady_clock::now();
  Opts o = parse(argc, argv);
  probe::Env env = probe::query_env();
  const int dev = probe::open_device(PROBE_NAME, env, o.device, kUsage);

  cublasHandle_t h;
  check_cublas(cublasCreate(&h), "cublasCreate");
  int cublas_ver = 0;
  cublasGetVersion(h, &cublas_ver);

  probe::Rec extra("x");
  extra.i64("min_size", o.min_size).i64("max_size", o.max_size).i64("iters", o.iters).i64("warmup", o.warmup)
      .i64("cublas_version", cublas_ver).str("timing", "cudaEvent pair per product, median");
  probe::print_header(PROBE_NAME, env, dev, &extra);

  cudaStream_t s;
  PROBE_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  check_cublas(cublasSetStream(h, s), "cublasSetStream");
  cudaEvent_t e0, e1;
  PROBE_CHECK(cudaEventCreate(&e0));
  PROBE_CHECK(cudaEventCreate(&e1));

  const size_t nmax = static_cast<size_t>(o.max_size);
  __nv_bfloat16 *A = nullptr, *B = nullptr, *C = nullptr;
  PROBE_CHECK(cudaMalloc(&A, nmax * nmax * sizeof(__nv_bfloat16)));
  PROBE_CHECK(cudaMalloc(&B, nmax * nmax * sizeof(__nv_bfloat16)));
  PROBE_CHECK(cudaMalloc(&C, nmax * nmax * sizeof(__nv_bfloat16)));

  const float alpha = 1.0f, beta = 0.0f;
  for (long long sz = o.min_size; sz <= o.max_size; sz *= 2) {
    const int m = static_cast<int>(sz), n = m, k = m;
    const size_t elems = static_cast<size_t>(sz) * sz;
    fill_kernel<<<1024, 256, 0, s>>>(A, elems, 1u + static_cast<unsigned>(sz));
    PROBE_CHECK(cudaGetLastError());
    fill_kernel<<<1024, 256, 0, s>>>(B, elems, 7u + static_cast<unsigned>(sz));
    PROBE_CHECK(cudaGetLastError());
    PROBE_CHECK(cudaMemsetAsync(C, 0xff, elems * sizeof(__nv_bfloat16), s));  // poison (NaN in bf16)

    auto gemm = [&]() {
      // C(m x n) = A^T (A stored k x m, lda = k) * B (stored k x n, ldb = k); C ldc = m
      check_cublas(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, A, CUDA_R_16BF, k, B, CUDA_R_16BF, k,
                                &beta, C, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                   "cublasGemmEx");
    };
    for (long long w = 0; w < o.warmup; ++w) gemm();
    PROBE_CHECK(cudaStreamSynchronize(s));
    std::vector<double> t;
    for (long long it = 0; it < o.iters; ++it) {
      PROBE_CHECK(cudaEventRecord(e0, s));
      gemm();
      PROBE_CHECK(cudaEventRecord(e1, s));
      PROBE_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      PROBE_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      t.push_back(ms * 1e3);
    }

    PROBE_CHECK(cudaStreamSynchronize(s));
    // Check 64 sampled outputs against a float64 reference on the same bf16 inputs.
    double worst = 0;
    bool any_nan = false;
    std::vector<__nv_bfloat16> arow(k), bcol(k);
    for (int sidx = 0; sidx < 64; ++sidx) {
      int i = static_cast<int>((static_cast<unsigned long long>(sidx) * 2654435761ull + 12345) % m);
      int j = static_cast<int>((static_cast<unsigned long long>(sidx) * 40503ull + 777) % n);
      PROBE_CHECK(cudaMemcpy(arow.data(), A + static_cast<size_t>(i) * k, k * 2, cudaMemcpyDeviceToHost));
      PROBE_CHECK(cudaMemcpy(bcol.data(), B + static_cast<size_t>(j) * k, k * 2, cudaMemcpyDeviceToHost));
      __nv_bfloat16 c;
      PROBE_CHECK(cudaMemcpy(&c, C + static_cast<size_t>(j) * m + i, 2, cudaMemcpyDeviceToHost));
      double ref = 0, sq = 0;
      for (int q = 0; q < k; ++q) {
        double p = static_cast<double>(bf16_to_float(arow[q])) * bf16_to_float(bcol[q]);
        ref += p;
        sq += p * p;
      }
      double got = bf16_to_float(c);
      if (!std::isfinite(got)) any_nan = true;
      // scale: sqrt(sum p^2) is the typical magnitude of a sum of k random-sign products
      double err = std::fabs(got - ref) / std::max(std::sqrt(sq), 1e-30);
      worst = std::max(worst, err);
    }
    double med = probe::median(t);
    double flops = 2.0 * m * n * static_cast<double>(k);
    bool ok = !any_nan && worst < 2e-2;
    probe::Rec("gemm").str("dtype", "bf16").str("accumulate", "fp32").str("c_dtype", "bf16").str("layout", "TN")
        .i64("m", m).i64("n", n).i64("k", k).num("flop", flops, 0)
        .num("time_us", med, 3).num("time_min_us", probe::vmin(t), 3).num("time_max_us", probe::vmax(t), 3)
        .num("TFLOPS", flops / (med * 1e-6) / 1e12, 2).i64("iters", o.iters)
        .num("max_rel_err", any_nan ? NAN : worst, 6).str("check", ok ? "ok" : "FAILED").print();
    if (!ok) std::fprintf(stderr, "%s: size %d: check FAILED (max_rel_err %g, nan %d)\n", PROBE_NAME, m, worst, any_nan);
  }

  cublasDestroy(h);
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);
  probe::print_end(PROBE_NAME, t0);
  return 0;
}
