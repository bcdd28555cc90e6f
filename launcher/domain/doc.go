// Package domain converts a VirtualMachineInstance into a libvirt domain
// definition. Convert is a pure function: everything it needs from the host
// (domain type, file paths, firmware) comes in a Host value, so its output is
// checked byte for byte by golden-file tests (go test ./launcher/domain -update
// rewrites testdata/*.xml).
//
// It owns the mapping of the API's spec.domain to libvirt XML and the naming
// of domains and device aliases. It must not do I/O and must not import
// libvirt (cgo).
package domain
