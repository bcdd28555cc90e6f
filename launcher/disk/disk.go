package disk

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/launcher/nocloud"
)

// Dirs are where the volumes' files live: layout.DisksDir and
// layout.PVCDirRoot in a pod, temporary directories in tests.
type Dirs struct {
	Disks   string
	PVCRoot string
	// PVCDevices is layout.PVCDeviceRoot: the device of a Block-mode
	// claim's volume V is layout.PVCDevice(PVCDevices, V).
	PVCDevices string
	// Secrets is layout.SecretDirRoot: the cloud-init secrets of volume V
	// are mounted at layout.UserDataSecretDir(Secrets, V) and
	// layout.NetworkDataSecretDir(Secrets, V).
	Secrets string
}

// Prepare makes the file of every volume of vmi ready and returns them by
// volume name. It is idempotent: existing empty disks are kept (they hold
// the guest's writes), ISOs and container disks' overlays are made anew.
// An error wrapping ErrNotReady may go away by itself (a container disk's
// container has not started yet); any other will not.
func Prepare(vmi *virtv1.VirtualMachineInstance, dirs Dirs) (map[string]domain.Disk, error) {
	out := map[string]domain.Disk{}
	for _, v := range vmi.Spec.Volumes {
		var (
			d   domain.Disk
			err error
		)
		switch {
		case v.ContainerDisk != nil:
			d, err = containerDisk(dirs.Disks, v.Name)
		case v.PersistentVolumeClaim != nil:
			d, err = claimDisk(vmi, v.Name, dirs)
		case v.EmptyDisk != nil:
			d, err = emptyDisk(layout.DiskImage(dirs.Disks, v.Name), v.EmptyDisk.Capacity.Value())
		case v.CloudInitNoCloud != nil:
			d, err = noCloud(layout.NoCloudISO(dirs.Disks, v.Name), dirs.Secrets, v.Name, vmi, v.CloudInitNoCloud)
		default:
			err = fmt.Errorf("no supported volume source")
		}
		if err != nil {
			return nil, fmt.Errorf("volume %q: %w", v.Name, err)
		}
		out[v.Name] = d
	}
	return out, nil
}

// existing is a disk image someone else put in place.
func existing(path string) (domain.Disk, error) {
	f, err := os.Open(path)
	if err != nil {
		return domain.Disk{}, fmt.Errorf("disk image: %w", err)
	}
	defer f.Close()
	format, err := Format(f)
	if err != nil {
		return domain.Disk{}, fmt.Errorf("disk image %s: %w", path, err)
	}
	return domain.Disk{Path: path, Format: format}, nil
}

// qcow2Magic starts every qcow2 image ("QFI\xfb").
var qcow2Magic = []byte{'Q', 'F', 'I', 0xfb}

// Format tells qcow2 from raw by the image's magic number.
func Format(r io.Reader) (string, error) {
	head := make([]byte, len(qcow2Magic))
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "", err
	}
	if n == len(head) && bytes.Equal(head, qcow2Magic) {
		return domain.FormatQCOW2, nil
	}
	return domain.FormatRaw, nil
}

// emptyDisk creates a sparse raw file of capacity bytes unless one exists.
func emptyDisk(path string, capacity int64) (domain.Disk, error) {
	d := domain.Disk{Path: path, Format: domain.FormatRaw}
	if capacity <= 0 {
		return d, fmt.Errorf("empty disk: capacity must be positive")
	}
	if st, err := os.Stat(path); err == nil {
		if st.Size() < capacity {
			return d, fmt.Errorf("empty disk %s: exists with %d bytes, less than its capacity %d", path, st.Size(), capacity)
		}
		return d, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return d, fmt.Errorf("empty disk: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return d, fmt.Errorf("empty disk: %w", err)
	}
	// Truncate allocates nothing: the file stays sparse until the guest writes.
	if err := f.Truncate(capacity); err != nil {
		f.Close()
		os.Remove(path)
		return d, fmt.Errorf("empty disk %s: %w", path, err)
	}
	return d, f.Close()
}

func noCloud(path, secretDirRoot, volume string, vmi *virtv1.VirtualMachineInstance, src *virtv1.CloudInitNoCloudSource) (domain.Disk, error) {
	d := domain.Disk{Path: path, Format: domain.FormatRaw}
	user, err := pick("userData", src.UserData, src.UserDataBase64)
	if err != nil {
		return d, err
	}
	if src.SecretRef != nil {
		if user, err = secretKey(layout.UserDataSecretDir(secretDirRoot, volume), "userdata", "userData"); err != nil {
			return d, fmt.Errorf("cloudInitNoCloud secretRef %s: %w", src.SecretRef.Name, err)
		}
	}
	network, err := pick("networkData", src.NetworkData, src.NetworkDataBase64)
	if err != nil {
		return d, err
	}
	if src.NetworkDataSecretRef != nil {
		if network, err = secretKey(layout.NetworkDataSecretDir(secretDirRoot, volume), "networkdata", "networkData"); err != nil {
			return d, fmt.Errorf("cloudInitNoCloud networkDataSecretRef %s: %w", src.NetworkDataSecretRef.Name, err)
		}
	}
	hostname := vmi.Spec.Hostname
	if hostname == "" {
		hostname = vmi.Name
	}
	data := nocloud.Data{UserData: user, MetaData: nocloud.MetaData(string(vmi.UID), hostname), NetworkConfig: network}
	if err := nocloud.Write(path, data); err != nil {
		return d, fmt.Errorf("cloudInitNoCloud: %w", err)
	}
	return d, nil
}

// secretKey reads the first of keys present in a mounted secret's directory.
func secretKey(dir string, keys ...string) (string, error) {
	for _, k := range keys {
		b, err := os.ReadFile(filepath.Join(dir, k))
		if err == nil {
			return string(b), nil
		}
		if !os.IsNotExist(err) {
			return "", err
		}
	}
	return "", fmt.Errorf("none of the keys %v in %s", keys, dir)
}

// pick returns the plain or the base64 form of a cloud-init document.
func pick(field, plain, b64 string) (string, error) {
	if plain != "" && b64 != "" {
		return "", fmt.Errorf("cloudInitNoCloud: %s and %sBase64 are exclusive", field, field)
	}
	if b64 == "" {
		return plain, nil
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", fmt.Errorf("cloudInitNoCloud: %sBase64: %w", field, err)
	}
	return string(b), nil
}
