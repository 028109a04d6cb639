module github.com/evalhost/evalhost

go 1.26.8

require (
	github.com/coder/websocket v1.8.15
	github.com/creack/pty v1.1.24
	github.com/spf13/pflag v1.0.10
	github.com/tidwall/gjson v1.20.0
	golang.org/x/sync v0.24.0
)

require (
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.0 // indirect
)
