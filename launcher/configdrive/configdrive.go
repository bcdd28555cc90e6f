package configdrive

import (
	"encoding/json"
	"fmt"
	"strconv"

	"kubevirt.dev/virt/launcher/isoimage"
)

// VolumeLabel is the label the ConfigDrive datasources look for.
const VolumeLabel = "config-2"

// The files of the drive.
const (
	MetaDataFile    = "openstack/latest/meta_data.json"
	UserDataFile    = "openstack/latest/user_data"
	NetworkDataFile = "openstack/latest/network_data.json"
)

// Data is the content of a config drive.
type Data struct {
	// InstanceID is the instance's identity: cloud-init reruns its
	// per-instance modules when it changes. It is also the drive's uuid.
	InstanceID string
	Hostname   string
	// PublicKeys go into meta_data.json's public_keys.
	PublicKeys []string
	UserData   string
	// NetworkData (OpenStack network_data.json) is written only when not
	// empty.
	NetworkData string
}

// metaData is meta_data.json, with KubeVirt's fields.
type metaData struct {
	InstanceID    string            `json:"instance_id"`
	LocalHostname string            `json:"local_hostname,omitempty"`
	Hostname      string            `json:"hostname,omitempty"`
	UUID          string            `json:"uuid,omitempty"`
	PublicKeys    map[string]string `json:"public_keys,omitempty"`
}

// MetaData renders meta_data.json.
func MetaData(d Data) ([]byte, error) {
	md := metaData{InstanceID: d.InstanceID, LocalHostname: d.Hostname, Hostname: d.Hostname, UUID: d.InstanceID}
	if len(d.PublicKeys) > 0 {
		md.PublicKeys = map[string]string{}
		for i, k := range d.PublicKeys {
			md.PublicKeys[strconv.Itoa(i)] = k
		}
	}
	return json.Marshal(md)
}

// Write writes the drive to path, replacing it atomically.
func Write(path string, d Data) error {
	md, err := MetaData(d)
	if err != nil {
		return fmt.Errorf("config drive: %w", err)
	}
	files := []isoimage.File{
		{Name: MetaDataFile, Data: md},
		{Name: UserDataFile, Data: []byte(d.UserData)},
	}
	if d.NetworkData != "" {
		files = append(files, isoimage.File{Name: NetworkDataFile, Data: []byte(d.NetworkData)})
	}
	if err := isoimage.Write(path, VolumeLabel, files); err != nil {
		return fmt.Errorf("config drive: %w", err)
	}
	return nil
}
