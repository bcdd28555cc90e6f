package configdrive

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"kubevirt.dev/virt/launcher/isoimage"
)

func TestWriteReadsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vol", "config.iso")
	d := Data{
		InstanceID: "6a1f3c52", Hostname: "testvm",
		PublicKeys:  []string{"ssh-ed25519 AAAA a@b"},
		UserData:    "#cloud-config\nruncmd: [touch /ran]\n",
		NetworkData: `{"links":[],"networks":[],"services":[]}`,
	}
	if err := Write(path, d); err != nil {
		t.Fatal(err)
	}
	label, files, err := isoimage.Read(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if label != VolumeLabel {
		t.Errorf("label = %q, want %q", label, VolumeLabel)
	}
	if len(files) != 3 {
		t.Errorf("files = %v, want the three of the layout", files)
	}
	if got := string(files[UserDataFile]); got != d.UserData {
		t.Errorf("%s = %q, want %q", UserDataFile, got, d.UserData)
	}
	if got := string(files[NetworkDataFile]); got != d.NetworkData {
		t.Errorf("%s = %q", NetworkDataFile, got)
	}
	var md map[string]any
	if err := json.Unmarshal(files[MetaDataFile], &md); err != nil {
		t.Fatalf("%s: %v (%q)", MetaDataFile, err, files[MetaDataFile])
	}
	if md["uuid"] != "6a1f3c52" || md["hostname"] != "testvm" || md["instance_id"] != "6a1f3c52" {
		t.Errorf("meta data = %v", md)
	}
	if keys, _ := md["public_keys"].(map[string]any); keys["0"] != "ssh-ed25519 AAAA a@b" {
		t.Errorf("public_keys = %v", md["public_keys"])
	}
}

func TestWriteWithoutNetworkData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.iso")
	if err := Write(path, Data{InstanceID: "i", Hostname: "h"}); err != nil {
		t.Fatal(err)
	}
	_, files, err := isoimage.Read(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := files[NetworkDataFile]; ok {
		t.Error("network_data.json written although empty")
	}
	if string(files[MetaDataFile]) != `{"instance_id":"i","local_hostname":"h","hostname":"h","uuid":"i"}` {
		t.Errorf("meta data = %s", files[MetaDataFile])
	}
}
