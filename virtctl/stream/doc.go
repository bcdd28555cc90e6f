// Package stream opens the WebSocket streams of a VMI's subresources
// (console, vnc; docs/guest-access.md) through the kube-apiserver with the
// credentials of a rest.Config, and presents each as a plain byte stream.
//
// It owns the wire format of those streams, the subprotocol
// plain.kubevirt.io: binary messages carrying raw bytes both ways, and what
// a close frame from the server means to a reader. What flows over a stream
// (a serial console, RFB) is for its callers.
package stream
