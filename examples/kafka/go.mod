module github.com/levee-go/levee/examples/kafka

go 1.25.0

require (
	github.com/levee-go/levee v0.1.0
	github.com/stretchr/testify v1.12.1
	github.com/twmb/franz-go v1.21.7
	github.com/twmb/franz-go/pkg/kadm v1.18.0
	github.com/twmb/franz-go/pkg/kfake v0.0.0-20260804154521-adb3a18abe14
	github.com/twmb/franz-go/pkg/kmsg v1.13.1
	go.uber.org/goleak v1.3.0
)

require (
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/pierrec/lz4/v4 v4.1.26 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.51.0 // indirect
)
