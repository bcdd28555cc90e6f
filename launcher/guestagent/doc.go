// Package guestagent follows the guest agent of a launcher's domain and keeps
// what it last reported about the guest: its OS, host name and interfaces.
//
// The agent runs inside the guest and is not trusted: it may hang, lie or
// answer megabytes. So a Reporter asks it from a goroutine of its own (never
// on a caller's path: a hung agent slows no call of the launcher), only
// while libvirt says it is connected, with libvirt's answer time bounded, and
// cuts every answer to the API's bounds before anyone sees it.
//
// It talks to libvirt only through launcher/hypervisor and must not import
// libvirt itself; it knows nothing of the domain's lifecycle, which the
// caller (launcher/supervisor's hooks) tells it about.
package guestagent
