module auditor/gotar

go 1.19
