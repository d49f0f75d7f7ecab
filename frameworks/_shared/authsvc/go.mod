module arena/frameworks/_shared/authsvc

go 1.26.0
