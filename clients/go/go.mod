module github.com/nfkeeper/nfkeeper/clients/go

go 1.22
