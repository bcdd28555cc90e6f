package disk

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/accesscredential"
	"kubevirt.dev/virt/launcher/configdrive"
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
	// Config is layout.ConfigDirRoot: config volume V is projected at
	// layout.ConfigDir(Config, V).
	Config string
	// Access is layout.AccessCredentialDirRoot: the secret of the i-th
	// access credential is projected at layout.AccessCredentialDir(Access, i).
	Access string
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
			d, err = noCloud(layout.NoCloudISO(dirs.Disks, v.Name), dirs, v.Name, vmi, v.CloudInitNoCloud)
		case v.CloudInitConfigDrive != nil:
			d, err = configDrive(layout.ConfigISO(dirs.Disks, v.Name), dirs, v.Name, vmi, v.CloudInitConfigDrive)
		case isConfig(&v):
			iso, dir := configISO(dirs, &v)
			d, err = configDisk(iso, dir, configLabel(&v))
		case v.Sysprep != nil:
			iso, dir := configISO(dirs, &v)
			d, err = sysprepDisk(iso, dir)
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

func noCloud(path string, dirs Dirs, volume string, vmi *virtv1.VirtualMachineInstance, src *virtv1.CloudInitNoCloudSource) (domain.Disk, error) {
	d := domain.Disk{Path: path, Format: domain.FormatRaw}
	c, err := cloudInitDocs("cloudInitNoCloud", dirs.Secrets, volume, cloudInitSource{
		userData: src.UserData, userDataBase64: src.UserDataBase64, secretRef: src.SecretRef,
		networkData: src.NetworkData, networkDataBase64: src.NetworkDataBase64, networkDataSecretRef: src.NetworkDataSecretRef,
	})
	if err != nil {
		return d, err
	}
	keys, err := accesscredential.PublicKeys(vmi, dirs.Access, accesscredential.NoCloud)
	if err != nil {
		return d, err
	}
	data := nocloud.Data{UserData: c.user, MetaData: nocloud.MetaData(string(vmi.UID), hostname(vmi), keys...), NetworkConfig: c.network}
	if err := nocloud.Write(path, data); err != nil {
		return d, fmt.Errorf("cloudInitNoCloud: %w", err)
	}
	return d, nil
}

func configDrive(path string, dirs Dirs, volume string, vmi *virtv1.VirtualMachineInstance, src *virtv1.CloudInitConfigDriveSource) (domain.Disk, error) {
	d := domain.Disk{Path: path, Format: domain.FormatRaw, ReadOnly: true}
	c, err := cloudInitDocs("cloudInitConfigDrive", dirs.Secrets, volume, cloudInitSource{
		userData: src.UserData, userDataBase64: src.UserDataBase64, secretRef: src.SecretRef,
		networkData: src.NetworkData, networkDataBase64: src.NetworkDataBase64, networkDataSecretRef: src.NetworkDataSecretRef,
	})
	if err != nil {
		return d, err
	}
	keys, err := accesscredential.PublicKeys(vmi, dirs.Access, accesscredential.ConfigDrive)
	if err != nil {
		return d, err
	}
	data := configdrive.Data{InstanceID: string(vmi.UID), Hostname: hostname(vmi), PublicKeys: keys, UserData: c.user, NetworkData: c.network}
	if err := configdrive.Write(path, data); err != nil {
		return d, fmt.Errorf("cloudInitConfigDrive: %w", err)
	}
	return d, nil
}

func hostname(vmi *virtv1.VirtualMachineInstance) string {
	if vmi.Spec.Hostname != "" {
		return vmi.Spec.Hostname
	}
	return vmi.Name
}

// cloudInitSource is what cloudInitNoCloud and cloudInitConfigDrive share.
type cloudInitSource struct {
	userData, userDataBase64       string
	secretRef                      *corev1.LocalObjectReference
	networkData, networkDataBase64 string
	networkDataSecretRef           *corev1.LocalObjectReference
}

type cloudInitContent struct{ user, network string }

// cloudInitDocs resolves the user and network data of a cloud-init volume
// from the spec or from its secrets, mounted below secretDirRoot.
func cloudInitDocs(kind, secretDirRoot, volume string, src cloudInitSource) (cloudInitContent, error) {
	var c cloudInitContent
	var err error
	if c.user, err = pick(kind, "userData", src.userData, src.userDataBase64); err != nil {
		return c, err
	}
	if src.secretRef != nil {
		if c.user, err = secretKey(layout.UserDataSecretDir(secretDirRoot, volume), "userdata", "userData"); err != nil {
			return c, fmt.Errorf("%s secretRef %s: %w", kind, src.secretRef.Name, err)
		}
	}
	if c.network, err = pick(kind, "networkData", src.networkData, src.networkDataBase64); err != nil {
		return c, err
	}
	if src.networkDataSecretRef != nil {
		if c.network, err = secretKey(layout.NetworkDataSecretDir(secretDirRoot, volume), "networkdata", "networkData"); err != nil {
			return c, fmt.Errorf("%s networkDataSecretRef %s: %w", kind, src.networkDataSecretRef.Name, err)
		}
	}
	return c, nil
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
func pick(kind, field, plain, b64 string) (string, error) {
	if plain != "" && b64 != "" {
		return "", fmt.Errorf("%s: %s and %sBase64 are exclusive", kind, field, field)
	}
	if b64 == "" {
		return plain, nil
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", fmt.Errorf("%s: %sBase64: %w", kind, field, err)
	}
	return string(b), nil
}
