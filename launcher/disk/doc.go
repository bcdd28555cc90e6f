// Package disk prepares the files behind a VMI's volumes before its domain is
// defined: it creates the writable qcow2 overlays of container disks over
// the disks their containers hold (layout.ContainerDisk), finds the disk
// images of Filesystem persistent volume claims and detects their format or
// creates them sparse, sized from the claim (KubeVirt's way), passes Block
// claims' devices through, creates empty disks as sparse files and builds
// cloud-init NoCloud ISOs. Its result is the
// domain.Host.Disks map the converter takes.
//
// It owns the I/O the pure converter (launcher/domain) must not do.
package disk
