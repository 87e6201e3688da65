/*!
 * \file empty_system_lib.c
 * \brief A system lib with no functions, for a device binary linked without generated code.
 *        Not part of libpytvm_crt.a (generated system libs define TVMSystemLibEntryPoint).
 */
#include "pytvm_crt/module.h"

/* Count 0, then the final NUL. */
static const char kNames[2] = {'\0', '\0'};
static const TVMFuncRegistry kRegistry = {kNames, NULL};
static const TVMModule kModule = {&kRegistry};

const TVMModule* TVMSystemLibEntryPoint(void) { return &kModule; }
