// Package rfbtest is an RFB 3.8 server for tests: it shows one image to
// any client, the way QEMU's VNC server shows a guest's display (security
// None, Raw encoding, the client's pixel format).
package rfbtest
