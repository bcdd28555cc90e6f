// Package configdrive writes OpenStack config drives, the cloudInitConfigDrive
// volume: an ISO 9660 image labelled config-2 holding
// openstack/latest/meta_data.json, user_data and, when given,
// network_data.json, as cloud-init's ConfigDrive datasource (and Ignition's
// and cloudbase-init's) read them. The meta data carries what KubeVirt's
// does: the instance's UID and host name and the SSH public keys of
// accessCredentials with propagationMethod configDrive.
//
// The ISO itself is launcher/isoimage's.
package configdrive
