module github.com/rpengine/rpengine

go 1.26

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/gophercloud/gophercloud/v2 v2.16.0 // indirect
	github.com/tetratelabs/wazero v1.12.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
)
