// Package projected reads the directories the kubelet projects into the
// launcher pod for config volumes and access credentials (configMap, secret,
// downwardAPI and projected volumes): tenant data, read through an os.Root
// (no symlink leads outside the directory), skipping the kubelet's own
// "..data" entries, bounded in files, depth and bytes.
//
// It only reads; what becomes of the files (an ISO, SSH keys) is its
// callers' business (launcher/disk, launcher/accesscredential).
package projected
