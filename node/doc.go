// Package node is virt-handler, the platform's daemon on every node; its
// packages below drive the launchers of the VMIs handed to the node and
// report what their guests do.
//
// Packages under node/ must not import controllers/ or apiserver/: they talk
// to virt-controller only through the VMI's status, and share vocabulary
// with it through internal/. Of the launcher they import only its contract,
// launcher/api/v1, and launcher/layout, so no libvirt (cgo) reaches the node
// daemon.
package node
