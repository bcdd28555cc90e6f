// Package console measures the serial console's keystroke echo: one
// printable byte at a time sent to the interactive shell on the test
// guest's ttyS0 and timed until the guest's echo of it comes back, on the
// node straight at QEMU's chardev socket in the launcher pod's private
// directory, and through the console subresource (kube-apiserver's
// aggregator, virt-apiserver, virt-handler) as `virtctl console` reaches
// it; both on the same VMI, in alternating blocks. The target: through the
// aggregator within 5 ms of the socket at p50.
//
// The keystroke and echo logic (echo.go) and the statistics (stats.go)
// work on any byte stream and are tested without a cluster; run.go owns
// the VMI and the two connections. It must not import the product's
// node or handler internals beyond node/podfs, the same dial
// virt-handler uses, and virtctl/stream, the client's.
package console
