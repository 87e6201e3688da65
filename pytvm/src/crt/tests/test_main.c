/*! \file test_main.c \brief Runs every CRT unit-test suite; exit status 0 when all pass. */
#include "crt_test.h"

int main(void) {
  crt_suite_lifecycle(); /* first: checks calls made before TVMInitializeRuntime */
  crt_suite_func_registry();
  crt_suite_mutable_registry();
  crt_suite_func_handle();
  crt_suite_packed_call();
  crt_suite_module_table();
  crt_suite_page_allocator();
  crt_suite_workspace();
  crt_suite_ndarray();
  crt_suite_last_error();
  crt_suite_device_api();
  return crt_test_summary();
}
