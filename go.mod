module github.com/faultline/faultline

go 1.26.8

require (
	github.com/alecthomas/participle/v2 v2.1.4
	github.com/bluekeyes/go-gitdiff v0.9.0
	github.com/dustin/go-humanize v1.1.0
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/jessevdk/go-flags v1.6.1
	github.com/pelletier/go-toml/v2 v2.4.3
	github.com/vbauerster/mpb/v8 v8.16.2
	golang.org/x/sys v0.49.0
	golang.org/x/term v0.44.0
)

require (
	github.com/VividCortex/ewma v1.2.0 // indirect
	github.com/acarl005/stripansi v0.0.0-20180116102854-5a71ef0e047d // indirect
	github.com/alecthomas/repr v0.5.2 // indirect
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/mattn/go-runewidth v0.0.30 // indirect
	github.com/vbauerster/cupwriter v0.0.5 // indirect
)
