:INPUT
# iptables prints no flags for I_DATA; the kernel still gets them.
-p sctp -m sctp --chunk-types any DATA:Be,ABORT:t,SHUTDOWN_COMPLETE:T,I_DATA:iU;-p sctp -m sctp --chunk-types any DATA:Be,ABORT:t,SHUTDOWN_COMPLETE:T,I_DATA;OK
-p sctp -m sctp ! --chunk-types only INIT,ASCONF,FORWARD_TSN --sport 1:2 ! --dport 3;-p sctp -m sctp --sport 1:2 ! --dport 3 ! --chunk-types only INIT,FORWARD_TSN,ASCONF;OK
-p sctp -m sctp --chunk-types all ALL;=;OK
-p sctp -m sctp --chunk-types any NONE;=;OK
