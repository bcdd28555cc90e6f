package disk

import (
	"fmt"
	"strings"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/isoimage"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/launcher/projected"
)

// The labels of config volumes' ISOs, KubeVirt's: configMap, secret and
// downwardAPI take their volumeLabel and default to ConfigLabel, a
// serviceAccount has ConfigLabel, sysprep SysprepLabel (Windows looks for
// the answer file on every removable medium, whatever its label).
const (
	ConfigLabel  = "cfgdata"
	SysprepLabel = "unattendCD"
)

// configDisk turns the directory the kubelet projected for a config volume
// into a read-only ISO.
func configDisk(isoPath, dir, label string) (domain.Disk, error) {
	d := domain.Disk{Path: isoPath, Format: domain.FormatRaw, ReadOnly: true}
	files, err := projected.Read(dir)
	if err != nil {
		return d, err
	}
	if err := isoimage.Write(isoPath, label, isoFiles(files)); err != nil {
		return d, err
	}
	return d, nil
}

// sysprepDisk is configDisk for a sysprep volume, which must hold an answer
// file, as KubeVirt requires.
func sysprepDisk(isoPath, dir string) (domain.Disk, error) {
	files, err := projected.Read(dir)
	if err != nil {
		return domain.Disk{}, err
	}
	found := false
	for _, f := range files {
		if n := strings.ToLower(f.Name); n == "autounattend.xml" || n == "unattend.xml" {
			found = true
		}
	}
	if !found {
		return domain.Disk{}, fmt.Errorf("sysprep: neither autounattend.xml nor unattend.xml in the ConfigMap or Secret")
	}
	if err := isoimage.Write(isoPath, SysprepLabel, isoFiles(files)); err != nil {
		return domain.Disk{}, err
	}
	return domain.Disk{Path: isoPath, Format: domain.FormatRaw, ReadOnly: true}, nil
}

// configLabel is the ISO label of a config volume.
func configLabel(v *virtv1.Volume) string {
	l := ""
	switch {
	case v.ConfigMap != nil:
		l = v.ConfigMap.VolumeLabel
	case v.Secret != nil:
		l = v.Secret.VolumeLabel
	case v.DownwardAPI != nil:
		l = v.DownwardAPI.VolumeLabel
	}
	if l == "" {
		l = ConfigLabel
	}
	return l
}

// isConfig reports whether v is a config volume that becomes an ISO of its
// projected directory.
func isConfig(v *virtv1.Volume) bool {
	return v.ConfigMap != nil || v.Secret != nil || v.DownwardAPI != nil || v.ServiceAccount != nil
}

// configISO is where the ISO of config volume v goes.
func configISO(dirs Dirs, v *virtv1.Volume) (string, string) {
	return layout.ConfigISO(dirs.Disks, v.Name), layout.ConfigDir(dirs.Config, v.Name)
}

func isoFiles(files []projected.File) []isoimage.File {
	out := make([]isoimage.File, len(files))
	for i, f := range files {
		out[i] = isoimage.File{Name: f.Name, Data: f.Data}
	}
	return out
}
