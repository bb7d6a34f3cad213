module github.com/levee-go/levee/examples/config

go 1.25.0

require (
	github.com/levee-go/levee v0.1.0
	github.com/levee-go/levee/leveeconfig v0.1.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require go.yaml.in/yaml/v3 v3.0.6 // indirect
