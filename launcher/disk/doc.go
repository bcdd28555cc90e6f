// Package disk prepares the files behind a VMI's volumes before its domain is
// defined: it finds the copies of container disks and the images of
// persistent volume claims and detects their format, creates empty disks as
// sparse files and builds cloud-init NoCloud ISOs. Its result is the
// domain.Host.Disks map the converter takes.
//
// It owns the I/O the pure converter (launcher/domain) must not do.
package disk
