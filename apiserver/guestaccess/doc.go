// Package guestaccess is virt-apiserver's side of docs/guest-access.md: where
// the virt-handler of a node is and how to reach it. It owns the one place
// where a node name becomes a handler URL (an informer on the handler pods,
// or a static table in tests) and the mutual TLS to the handlers (the
// handler serving CA, the VMI's node as the server name so one node's
// certificate cannot answer for another, virt-apiserver's client
// certificate, HTTP/1.1). The console, VNC and action subresources of
// apiserver/registry/virtualmachineinstance ask it for a location and a
// transport and proxy or send the request themselves.
//
// Guest access may be off (no certificates, no way to find handlers): every
// location is then a 503 that says why, and the rest of the API is served as
// usual.
//
// It reads handler pods through a kube client; it must not import
// apiserver/registry or anything of node/.
package guestaccess
