// Package cli is virtctl's command line: the cobra commands console, vnc,
// vnc screenshot, start, stop, restart, pause, unpause, soft-reboot and
// version, each an Options with Complete, Validate and Run as kubectl's
// commands are, and kubectl's kubeconfig flags (-n, --context,
// --kubeconfig, --as, ...) from cli-runtime's ConfigFlags.
//
// The commands are thin: the work is in packages console, vnc, lifecycle
// and apierror, which tests and other programs use without a terminal.
// The binary answers to two names, virtctl and the kubectl plugin
// kubectl-virt, and its help speaks the name it was called by.
package cli
