module tether.dev/tether

go 1.22
