// Package rfb is the client side of the Remote Framebuffer protocol (RFB
// 3.8, RFC 6143) that a screenshot needs and no more: the handshake with
// security type None, a shared ClientInit, one pixel format (32 bits per
// pixel, true colour) and one encoding (Raw), and the assembly of a
// framebuffer update into an image.
//
// It reads and writes an io.ReadWriter and knows nothing of WebSockets,
// Kubernetes or the platform: package vnc brings the stream.
package rfb
