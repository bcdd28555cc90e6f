// Package kvm decides whether a guest can use hardware virtualisation here:
// only when the CPU has vmx or svm and /dev/kvm answers like KVM. A /dev/kvm
// alone is not enough: a PVM host exposes one without vmx, and a stock guest
// kernel then crawls through an instruction emulator and dies, where QEMU's
// software emulation (TCG) would have booted it in seconds.
//
// It imports nothing of libvirt, so the node daemon may use it too.
package kvm
