:INPUT,FORWARD
-m policy --dir in --pol ipsec --mode tunnel --tunnel-src 10.1.2.3 --tunnel-dst 10.0.0.1/32;-m policy --dir in --pol ipsec --mode tunnel --tunnel-dst 10.0.0.1 --tunnel-src 10.1.2.3;OK
-m policy --dir in --pol ipsec --strict --mode tunnel --tunnel-src 10.1.2.3/255.255.255.0 --next ! --spi 0x200 ! --proto ah --next --reqid 7;-m policy --dir in --pol ipsec --strict --mode tunnel --tunnel-src 10.1.2.3/24 --next ! --spi 0x200 ! --proto ah --next --reqid 7;OK
