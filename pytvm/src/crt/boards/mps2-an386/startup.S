/*
 * startup.S -- vector table and exception entry points of the mps2-an386 board image
 * (Cortex-M4F). The reset handler and the fault report are C (board.c); this file holds what C
 * cannot express: the table of initial stack pointer and handler addresses, the fault entry that
 * finds the stacked exception frame, and the semihosting exit call.
 */
  .syntax unified
  .cpu cortex-m4
  .thumb

  .section .isr_vector, "a", %progbits
  .align 2
  .globl pytvm_board_vectors
  .type pytvm_board_vectors, %object
pytvm_board_vectors:
  .word __stack_top              /* initial main stack pointer */
  .word pytvm_board_reset        /* Reset */
  .word pytvm_board_fault_entry  /* NMI */
  .word pytvm_board_fault_entry  /* HardFault */
  .word pytvm_board_fault_entry  /* MemManage */
  .word pytvm_board_fault_entry  /* BusFault */
  .word pytvm_board_fault_entry  /* UsageFault */
  .word 0, 0, 0, 0
  .word pytvm_board_fault_entry  /* SVCall (unused: a call is a fault) */
  .word pytvm_board_fault_entry  /* DebugMonitor */
  .word 0
  .word pytvm_board_fault_entry  /* PendSV (unused) */
  .word pytvm_board_systick_isr  /* SysTick: upper bits of the monotonic counter */
  /* 32 external interrupts; only UART0's are enabled (they wake the receive loop). */
  .rept 32
  .word pytvm_board_irq_isr
  .endr
  .size pytvm_board_vectors, . - pytvm_board_vectors

  .text
  .align 1
  /* Any fault: pass the stacked frame (r0-r3, r12, lr, pc, xpsr) and EXC_RETURN to C. */
  .globl pytvm_board_fault_entry
  .type pytvm_board_fault_entry, %function
  .thumb_func
pytvm_board_fault_entry:
  tst lr, #4
  ite eq
  mrseq r0, msp
  mrsne r0, psp
  mov r1, lr
  b pytvm_board_fault
  .size pytvm_board_fault_entry, . - pytvm_board_fault_entry

  /* void pytvm_board_semihost_exit(uint32_t reason): SYS_EXIT (0x18); returns only when no
   * debugger/emulator handles semihosting (then the caller halts). */
  .globl pytvm_board_semihost_exit
  .type pytvm_board_semihost_exit, %function
  .thumb_func
pytvm_board_semihost_exit:
  mov r1, r0
  movs r0, #0x18
  bkpt 0xab
  bx lr
  .size pytvm_board_semihost_exit, . - pytvm_board_semihost_exit
