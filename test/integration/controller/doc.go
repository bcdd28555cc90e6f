// Package controller tests virt-controller as deployed: two replicas of its
// image with leader election, virt-handler and launcher images, on the
// local cluster of test/e2e/framework (attached to when it runs, brought up
// otherwise; no cluster is a failure, never a skip).
//
// It covers what only the real cluster shows: the scheduler binding the
// one launcher pod of a VMI, the hand-off to the node, deletion, a
// VirtualMachine recreating its instance, and the Lease changing hands
// when the leading replica is killed or deleted, without a second launcher
// pod for any VMI.
package controller
