module gostatic

go 1.19
