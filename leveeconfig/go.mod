module github.com/levee-go/levee/leveeconfig

go 1.25.0

require (
	github.com/levee-go/levee v0.1.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	go.yaml.in/yaml/v3 v3.0.6
	pgregory.net/rapid v1.3.0
)
