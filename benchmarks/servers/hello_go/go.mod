module netbench.bench/hello_go

go 1.21
