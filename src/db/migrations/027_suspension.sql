-- The operator suspends a product that must not take payments (it sells what it must not, or is under review): its
-- calls that move money, bind a card or create an order are refused until it is resumed; reads and refunds go on.
ALTER TABLE products ADD COLUMN suspended_at timestamptz;
ALTER TABLE products ADD COLUMN suspension_reason text CHECK (length(suspension_reason) BETWEEN 1 AND 500);
ALTER TABLE products ADD CONSTRAINT products_suspension_reason CHECK ((suspended_at IS NULL) = (suspension_reason IS NULL));
