package nocloud

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"kubevirt.dev/virt/launcher/isoimage"
)

// VolumeLabel is the label cloud-init's NoCloud datasource looks for.
const VolumeLabel = "cidata"

// Data is the content of a NoCloud ISO.
type Data struct {
	UserData string
	MetaData string
	// NetworkConfig is written only when not empty.
	NetworkConfig string
}

// MetaData is a NoCloud meta-data document. cloud-init reruns its per-instance
// modules when instanceID changes. publicKeys, when any, go under
// public-keys, which cloud-init adds to the default user's authorized_keys
// (KubeVirt's accessCredentials with propagationMethod noCloud).
func MetaData(instanceID, hostname string, publicKeys ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "instance-id: %s\nlocal-hostname: %s\n", instanceID, hostname)
	if len(publicKeys) > 0 {
		b.WriteString("public-keys:\n")
		for i, k := range publicKeys {
			// A JSON string is a YAML double-quoted scalar: a key's
			// content cannot break out of its line.
			q, _ := json.Marshal(k)
			fmt.Fprintf(&b, "  %q: %s\n", strconv.Itoa(i), q)
		}
	}
	return b.String()
}

// Write writes the ISO to path, replacing it atomically.
func Write(path string, data Data) error {
	files := []isoimage.File{
		{Name: "user-data", Data: []byte(data.UserData)},
		{Name: "meta-data", Data: []byte(data.MetaData)},
	}
	if data.NetworkConfig != "" {
		files = append(files, isoimage.File{Name: "network-config", Data: []byte(data.NetworkConfig)})
	}
	if err := isoimage.Write(path, VolumeLabel, files); err != nil {
		return fmt.Errorf("nocloud: %w", err)
	}
	return nil
}
