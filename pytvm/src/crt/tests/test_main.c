/*! \file test_main.c \brief Runs every CRT unit-test suite; exit status 0 when all pass. */
#include "crt_test.h"

int main(void) {
  CrtSuiteLifecycle(); /* first: checks calls made before TVMInitializeRuntime */
  CrtSuiteFuncRegistry();
  CrtSuiteMutableRegistry();
  CrtSuiteFuncHandle();
  CrtSuitePackedCall();
  CrtSuiteModuleTable();
  CrtSuitePageAllocator();
  CrtSuiteWorkspace();
  CrtSuiteNDArray();
  CrtSuiteLastError();
  CrtSuiteDeviceApi();
  return CrtTestSummary();
}
