// Package layout is the contract between a launcher pod's three parties about
// where things are: virt-controller builds the pod with these volumes and
// paths, virt-launcher creates its files there, and virt-handler finds the
// launcher's socket on the host through the pod's volume directory.
//
// It is owned by the launcher and imports nothing of the platform, so the
// controller and the node daemon can import it without pulling in libvirt.
package layout
