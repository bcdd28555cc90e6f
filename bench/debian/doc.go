// Package debian measures a real cloud guest's boot (part 7): the Debian
// 12 image of hack/build-debian-image.sh with the example VM's template
// (artifacts/examples/vm-debian.yaml: cloud-init NoCloud, 512Mi), timed
// until the first SSH login, as a VMI posted to the platform against the
// same domain XML defined and started by raw libvirt. The sides alternate
// and boot one guest at a time; no target is set, the report gives each
// boot, the medians, their difference and their ratio.
//
// The platform's VMI is timed from the POST to Running (a watch) and to
// the first login at its status.interfaces[0].ipAddress (platform.go).
// The raw guest (raw.go) is the same template made into a domain by the
// launcher's own code (launcher/disk for the qcow2 overlay and the NoCloud
// ISO, launcher/domain for the XML), booted by rawguest on a plain tap of
// its own (198.19.251.0/30, 198.19.252.0/24), timed from the define. Both
// log in with an ed25519 key the bench makes per run and puts in the
// example's user data in place of its placeholder (guest.go), every 0.5 s
// (login.go).
//
// The statistics, the alternation, the key's placement, the raw guest's
// files and domain and the logins (against an SSH server in the test) are
// tested without a VM; the raw side's boot is behind the build tag
// rawguest.
package debian
