; isovet static encoding; model ec; transactions [withdraw]
(set-logic ALL)
(declare-sort T 0)
(declare-datatypes ((Ty 0)) (((ty.withdraw))))
(declare-sort R.Account 0)
(declare-datatypes ((F.Account 0)) (((Account.Alive) (Account.Balance))))
(declare-fun Account.AccID (R.Account) Int)
(declare-fun alive.Account (R.Account T) Bool)
(declare-fun WR.Account (R.Account F.Account T T) Bool)
(declare-fun WW.Account (R.Account F.Account T T) Bool)
(declare-fun RW.Account (R.Account F.Account T T) Bool)
(declare-fun typ (T) Ty)
(declare-fun vis (T T) Bool)
(declare-fun ar (T T) Bool)
(declare-fun WR (T T) Bool)
(declare-fun WW (T T) Bool)
(declare-fun RW (T T) Bool)
(declare-fun withdraw.ID (T) Int)
(declare-fun withdraw.Amount (T) Int)
(declare-fun withdraw.bal (T) Int)
(declare-fun withdraw.bal.null (T) Bool)
(define-fun D ((a T) (b T)) Bool (or (= a b) (WR a b) (WW a b) (RW a b)))
; basic: ar is a strict total order, vis ⊆ ar, Lemma 4
(declare-const e1 T)
(declare-const e2 T)
(declare-const c1 T)
(declare-const c2 T)
(assert (and (not (ar e1 e1)) (not (ar e2 e2))))
(assert
  (and
    (=> (and (ar e1 e1) (ar e1 e1)) (ar e1 e1))
    (=> (and (ar e1 e1) (ar e1 e2)) (ar e1 e2))
    (=> (and (ar e1 e2) (ar e2 e1)) (ar e1 e1))
    (=> (and (ar e1 e2) (ar e2 e2)) (ar e1 e2))
    (=> (and (ar e2 e1) (ar e1 e1)) (ar e2 e1))
    (=> (and (ar e2 e1) (ar e1 e2)) (ar e2 e2))
    (=> (and (ar e2 e2) (ar e2 e1)) (ar e2 e1))
    (=> (and (ar e2 e2) (ar e2 e2)) (ar e2 e2))))
(assert
  (and
    (=> (not (= e1 e1)) (or (ar e1 e1) (ar e1 e1)))
    (=> (not (= e1 e2)) (or (ar e1 e2) (ar e2 e1)))
    (=> (not (= e2 e1)) (or (ar e2 e1) (ar e1 e2)))
    (=> (not (= e2 e2)) (or (ar e2 e2) (ar e2 e2)))))
(assert
  (and
    (=> (vis e1 e1) (ar e1 e1))
    (=> (WR e1 e1) (vis e1 e1))
    (=> (WW e1 e1) (ar e1 e1))
    (=> (RW e1 e1) (not (vis e1 e1)))
    (=> (vis e1 e2) (ar e1 e2))
    (=> (WR e1 e2) (vis e1 e2))
    (=> (WW e1 e2) (ar e1 e2))
    (=> (RW e1 e2) (not (vis e2 e1)))
    (=> (vis e2 e1) (ar e2 e1))
    (=> (WR e2 e1) (vis e2 e1))
    (=> (WW e2 e1) (ar e2 e1))
    (=> (RW e2 e1) (not (vis e1 e2)))
    (=> (vis e2 e2) (ar e2 e2))
    (=> (WR e2 e2) (vis e2 e2))
    (=> (WW e2 e2) (ar e2 e2))
    (=> (RW e2 e2) (not (vis e2 e2)))))
; a dependency between instances is a dependency on some row and field
(assert
  (and
    (=> (WR e1 e1) (exists ((r R.Account) (f F.Account)) (WR.Account r f e1 e1)))
    (=> (WR e1 e2) (exists ((r R.Account) (f F.Account)) (WR.Account r f e1 e2)))
    (=> (WR e2 e1) (exists ((r R.Account) (f F.Account)) (WR.Account r f e2 e1)))
    (=> (WR e2 e2) (exists ((r R.Account) (f F.Account)) (WR.Account r f e2 e2)))))
(assert
  (and
    (=> (WW e1 e1) (exists ((r R.Account) (f F.Account)) (WW.Account r f e1 e1)))
    (=> (WW e1 e2) (exists ((r R.Account) (f F.Account)) (WW.Account r f e1 e2)))
    (=> (WW e2 e1) (exists ((r R.Account) (f F.Account)) (WW.Account r f e2 e1)))
    (=> (WW e2 e2) (exists ((r R.Account) (f F.Account)) (WW.Account r f e2 e2)))))
(assert
  (and
    (=> (RW e1 e1) (exists ((r R.Account) (f F.Account)) (RW.Account r f e1 e1)))
    (=> (RW e1 e2) (exists ((r R.Account) (f F.Account)) (RW.Account r f e1 e2)))
    (=> (RW e2 e1) (exists ((r R.Account) (f F.Account)) (RW.Account r f e2 e1)))
    (=> (RW e2 e2) (exists ((r R.Account) (f F.Account)) (RW.Account r f e2 e2)))))
; table Account
(assert
  (forall ((r1 R.Account) (r2 R.Account)) (=> (= (Account.AccID r1) (Account.AccID r2)) (= r1 r2))))
(assert
  (forall ((r R.Account) (f F.Account))
    (and
      (=> (WR.Account r f e1 e1) (WR e1 e1))
      (=> (WW.Account r f e1 e1) (WW e1 e1))
      (=> (RW.Account r f e1 e1) (RW e1 e1))
      (=> (WR.Account r f e1 e2) (WR e1 e2))
      (=> (WW.Account r f e1 e2) (WW e1 e2))
      (=> (RW.Account r f e1 e2) (RW e1 e2))
      (=> (WR.Account r f e2 e1) (WR e2 e1))
      (=> (WW.Account r f e2 e1) (WW e2 e1))
      (=> (RW.Account r f e2 e1) (RW e2 e1))
      (=> (WR.Account r f e2 e2) (WR e2 e2))
      (=> (WW.Account r f e2 e2) (WW e2 e2))
      (=> (RW.Account r f e2 e2) (RW e2 e2)))))
(assert
  (forall ((r R.Account) (f F.Account))
    (and
      (=> (and (WR.Account r f e1 e1) (RW.Account r f e1 e1)) (WW.Account r f e1 e1))
      (=> (and (WR.Account r f e1 e1) (RW.Account r f e1 e2)) (WW.Account r f e1 e2))
      (=> (and (WR.Account r f e2 e1) (RW.Account r f e1 e1)) (WW.Account r f e2 e1))
      (=> (and (WR.Account r f e2 e1) (RW.Account r f e1 e2)) (WW.Account r f e2 e2))
      (=> (and (WR.Account r f e1 e2) (RW.Account r f e2 e1)) (WW.Account r f e1 e1))
      (=> (and (WR.Account r f e1 e2) (RW.Account r f e2 e2)) (WW.Account r f e1 e2))
      (=> (and (WR.Account r f e2 e2) (RW.Account r f e2 e1)) (WW.Account r f e2 e1))
      (=> (and (WR.Account r f e2 e2) (RW.Account r f e2 e2)) (WW.Account r f e2 e2)))))
(assert
  (forall ((r R.Account) (f F.Account))
    (and
      (=> (and (WR.Account r f e1 e1) (WR.Account r f e1 e1)) (= e1 e1))
      (=> (and (WR.Account r f e1 e2) (WR.Account r f e1 e2)) (= e1 e1))
      (=> (and (WR.Account r f e1 e1) (WR.Account r f e2 e1)) (= e1 e2))
      (=> (and (WR.Account r f e1 e2) (WR.Account r f e2 e2)) (= e1 e2))
      (=> (and (WR.Account r f e2 e1) (WR.Account r f e1 e1)) (= e2 e1))
      (=> (and (WR.Account r f e2 e2) (WR.Account r f e1 e2)) (= e2 e1))
      (=> (and (WR.Account r f e2 e1) (WR.Account r f e2 e1)) (= e2 e2))
      (=> (and (WR.Account r f e2 e2) (WR.Account r f e2 e2)) (= e2 e2)))))
(assert
  (forall ((r R.Account))
    (and
      (=> (alive.Account r e1) (alive.Account r e1))
      (=> (alive.Account r e1) (alive.Account r e2))
      (=> (alive.Account r e2) (alive.Account r e1))
      (=> (alive.Account r e2) (alive.Account r e2)))))
; necessary conditions for WR on Account (1 statement pairs)
(assert
  (forall ((r R.Account) (f F.Account))
    (and
      (=>
        (WR.Account r f e1 e1)
        (and
          (= (typ e1) ty.withdraw)
          (= (typ e1) ty.withdraw)
          (= f Account.Balance)
          (not (withdraw.bal.null e1))
          (> (withdraw.bal e1) (withdraw.Amount e1))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e1)
          (= (Account.AccID r) (withdraw.ID e1))))
      (=>
        (WR.Account r f e1 e2)
        (and
          (= (typ e1) ty.withdraw)
          (= (typ e2) ty.withdraw)
          (= f Account.Balance)
          (not (withdraw.bal.null e1))
          (> (withdraw.bal e1) (withdraw.Amount e1))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e1)
          (= (Account.AccID r) (withdraw.ID e2))))
      (=>
        (WR.Account r f e2 e1)
        (and
          (= (typ e2) ty.withdraw)
          (= (typ e1) ty.withdraw)
          (= f Account.Balance)
          (not (withdraw.bal.null e2))
          (> (withdraw.bal e2) (withdraw.Amount e2))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e2)
          (= (Account.AccID r) (withdraw.ID e1))))
      (=>
        (WR.Account r f e2 e2)
        (and
          (= (typ e2) ty.withdraw)
          (= (typ e2) ty.withdraw)
          (= f Account.Balance)
          (not (withdraw.bal.null e2))
          (> (withdraw.bal e2) (withdraw.Amount e2))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e2)
          (= (Account.AccID r) (withdraw.ID e2)))))))
; necessary conditions for WW on Account (1 statement pairs)
(assert
  (forall ((r R.Account) (f F.Account))
    (and
      (=>
        (WW.Account r f e1 e1)
        (and
          (= (typ e1) ty.withdraw)
          (= (typ e1) ty.withdraw)
          (= f Account.Balance)
          (not (withdraw.bal.null e1))
          (> (withdraw.bal e1) (withdraw.Amount e1))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e1)
          (not (withdraw.bal.null e1))
          (> (withdraw.bal e1) (withdraw.Amount e1))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e1)))
      (=>
        (WW.Account r f e1 e2)
        (and
          (= (typ e1) ty.withdraw)
          (= (typ e2) ty.withdraw)
          (= f Account.Balance)
          (not (withdraw.bal.null e1))
          (> (withdraw.bal e1) (withdraw.Amount e1))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e1)
          (not (withdraw.bal.null e2))
          (> (withdraw.bal e2) (withdraw.Amount e2))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e2)))
      (=>
        (WW.Account r f e2 e1)
        (and
          (= (typ e2) ty.withdraw)
          (= (typ e1) ty.withdraw)
          (= f Account.Balance)
          (not (withdraw.bal.null e2))
          (> (withdraw.bal e2) (withdraw.Amount e2))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e2)
          (not (withdraw.bal.null e1))
          (> (withdraw.bal e1) (withdraw.Amount e1))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e1)))
      (=>
        (WW.Account r f e2 e2)
        (and
          (= (typ e2) ty.withdraw)
          (= (typ e2) ty.withdraw)
          (= f Account.Balance)
          (not (withdraw.bal.null e2))
          (> (withdraw.bal e2) (withdraw.Amount e2))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e2)
          (not (withdraw.bal.null e2))
          (> (withdraw.bal e2) (withdraw.Amount e2))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e2))))))
; necessary conditions for RW on Account (1 statement pairs)
(assert
  (forall ((r R.Account) (f F.Account))
    (and
      (=>
        (RW.Account r f e1 e1)
        (and
          (= (typ e1) ty.withdraw)
          (= (typ e1) ty.withdraw)
          (= f Account.Balance)
          (= (Account.AccID r) (withdraw.ID e1))
          (not (withdraw.bal.null e1))
          (> (withdraw.bal e1) (withdraw.Amount e1))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e1)))
      (=>
        (RW.Account r f e1 e2)
        (and
          (= (typ e1) ty.withdraw)
          (= (typ e2) ty.withdraw)
          (= f Account.Balance)
          (= (Account.AccID r) (withdraw.ID e1))
          (not (withdraw.bal.null e2))
          (> (withdraw.bal e2) (withdraw.Amount e2))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e2)))
      (=>
        (RW.Account r f e2 e1)
        (and
          (= (typ e2) ty.withdraw)
          (= (typ e1) ty.withdraw)
          (= f Account.Balance)
          (= (Account.AccID r) (withdraw.ID e2))
          (not (withdraw.bal.null e1))
          (> (withdraw.bal e1) (withdraw.Amount e1))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e1)))
      (=>
        (RW.Account r f e2 e2)
        (and
          (= (typ e2) ty.withdraw)
          (= (typ e2) ty.withdraw)
          (= f Account.Balance)
          (= (Account.AccID r) (withdraw.ID e2))
          (not (withdraw.bal.null e2))
          (> (withdraw.bal e2) (withdraw.Amount e2))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e2))))))
; forcing: exact writes of one row and field ordered by ar are WW
(assert
  (forall ((r R.Account))
    (and
      (=>
        (and
          (= (typ e1) ty.withdraw)
          (= (typ e1) ty.withdraw)
          (not (withdraw.bal.null e1))
          (> (withdraw.bal e1) (withdraw.Amount e1))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e1)
          (not (withdraw.bal.null e1))
          (> (withdraw.bal e1) (withdraw.Amount e1))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e1)
          (not (= e1 e1)))
        (and
          (=> (ar e1 e1) (WW.Account r Account.Balance e1 e1))
          (=> (ar e1 e1) (WW.Account r Account.Balance e1 e1))))
      (=>
        (and
          (= (typ e1) ty.withdraw)
          (= (typ e2) ty.withdraw)
          (not (withdraw.bal.null e1))
          (> (withdraw.bal e1) (withdraw.Amount e1))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e1)
          (not (withdraw.bal.null e2))
          (> (withdraw.bal e2) (withdraw.Amount e2))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e2)
          (not (= e1 e2)))
        (and
          (=> (ar e1 e2) (WW.Account r Account.Balance e1 e2))
          (=> (ar e2 e1) (WW.Account r Account.Balance e2 e1))))
      (=>
        (and
          (= (typ e2) ty.withdraw)
          (= (typ e1) ty.withdraw)
          (not (withdraw.bal.null e2))
          (> (withdraw.bal e2) (withdraw.Amount e2))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e2)
          (not (withdraw.bal.null e1))
          (> (withdraw.bal e1) (withdraw.Amount e1))
          (= (Account.AccID r) (withdraw.ID e1))
          (alive.Account r e1)
          (not (= e2 e1)))
        (and
          (=> (ar e2 e1) (WW.Account r Account.Balance e2 e1))
          (=> (ar e1 e2) (WW.Account r Account.Balance e1 e2))))
      (=>
        (and
          (= (typ e2) ty.withdraw)
          (= (typ e2) ty.withdraw)
          (not (withdraw.bal.null e2))
          (> (withdraw.bal e2) (withdraw.Amount e2))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e2)
          (not (withdraw.bal.null e2))
          (> (withdraw.bal e2) (withdraw.Amount e2))
          (= (Account.AccID r) (withdraw.ID e2))
          (alive.Account r e2)
          (not (= e2 e2)))
        (and
          (=> (ar e2 e2) (WW.Account r Account.Balance e2 e2))
          (=> (ar e2 e2) (WW.Account r Account.Balance e2 e2)))))))
; variables of withdraw
(assert
  (and
    (=>
      (and (= (typ e1) ty.withdraw) (not (withdraw.bal.null e1)))
      (exists ((r1 R.Account)) (and (= (Account.AccID r1) (withdraw.ID e1)) (alive.Account r1 e1))))
    (=>
      (and (= (typ e2) ty.withdraw) (not (withdraw.bal.null e2)))
      (exists ((r1 R.Account)) (and (= (Account.AccID r1) (withdraw.ID e2)) (alive.Account r1 e2))))))
(assert
  (forall ((r1 R.Account))
    (and
      (=>
        (and (= (typ e1) ty.withdraw) (= (Account.AccID r1) (withdraw.ID e1)) (alive.Account r1 e1))
        (not (withdraw.bal.null e1)))
      (=>
        (and (= (typ e2) ty.withdraw) (= (Account.AccID r1) (withdraw.ID e2)) (alive.Account r1 e2))
        (not (withdraw.bal.null e2))))))
; query execution k=2
(assert (forall ((t T)) (or (= t e1) (= t e2))))
(assert (and (D c1 c2) (D c2 c1) (not (= c1 c2))))
(check-sat)
