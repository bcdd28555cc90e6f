// Package apiclient is how the platform's own components (virt-controller,
// virt-handler) reach the two API servers: their shared client flags, the
// clients built from them, and the event recorder that writes to the
// kube-apiserver. It holds no component's logic and must not import
// controllers/ or node/.
package apiclient
