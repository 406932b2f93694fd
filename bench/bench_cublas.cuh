// cuBLAS peers in benchmarks: abort with the status on any cuBLAS error.
#pragma once

#include <cublas_v2.h>

#include <cstdio>
#include <cstdlib>

#define BENCH_CUBLAS(expr)                                                                \
  do {                                                                                    \
    cublasStatus_t cublas_status_ = (expr);                                               \
    if (cublas_status_ != CUBLAS_STATUS_SUCCESS) {                                        \
      std::fprintf(stderr, "%s:%d %s: cublas status %d\n", __FILE__, __LINE__, #expr,     \
                   int(cublas_status_));                                                  \
      std::exit(2);                                                                       \
    }                                                                                     \
  } while (0)
