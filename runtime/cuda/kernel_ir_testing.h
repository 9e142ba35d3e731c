// Small NVPTX kernels in LLVM IR shared by the CUDA backend's tests.
#ifndef ACCELMEM_RUNTIME_CUDA_KERNEL_IR_TESTING_H_
#define ACCELMEM_RUNTIME_CUDA_KERNEL_IR_TESTING_H_

namespace accelmem {
namespace runtime {
namespace cuda {

// out[global thread id] = global thread id, for ids below n.
inline constexpr char kIotaKernelIr[] = R"(
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()

define void @iota(i32* %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %bid, %bdim
  %i = add i32 %base, %tid
  %in = icmp slt i32 %i, %n
  br i1 %in, label %store, label %done
store:
  %p = getelementptr i32, i32* %out, i32 %i
  store i32 %i, i32* %p
  br label %done
done:
  ret void
}
)";

}  // namespace cuda
}  // namespace runtime
}  // namespace accelmem

#endif  // ACCELMEM_RUNTIME_CUDA_KERNEL_IR_TESTING_H_
