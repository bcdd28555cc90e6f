// Package vnc reaches a VMI's graphical display: the vnc subresource's
// stream (Dial), a local TCP endpoint that any VNC viewer can use, each
// viewer connection over a WebSocket of its own (Proxy), and a PNG of the
// screen (Screenshot), which the hypervisor takes on the guest's node:
// virtctl speaks no RFB itself.
package vnc
