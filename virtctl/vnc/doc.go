// Package vnc reaches a VMI's graphical display: the vnc subresource's
// stream (Dial), a screenshot of it (Screenshot, over package rfb), and a
// local TCP endpoint that any VNC viewer can use, each viewer connection
// over a WebSocket of its own (Proxy).
//
// Screenshot is what an end-to-end test uses to look at a guest's screen.
package vnc
