package layout

import "path/filepath"

// GuestProbeSocketName is the launcher's socket for the exec and
// guestAgentPing probes (launcher/guestprobe), mode 0600, beside
// LauncherSocketName.
const GuestProbeSocketName = "guestprobe.sock"

// GuestProbeSocket is the guest probe socket below a PrivateVolume
// directory.
func GuestProbeSocket(privateDir string) string {
	return filepath.Join(privateDir, SocketDirName, GuestProbeSocketName)
}
